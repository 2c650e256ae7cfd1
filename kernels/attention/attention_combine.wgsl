// Merges split-K attention partials (attention.wgsl with splits > 1): for each (row, head), the splits' running
// maxima m_s, sums l_s and unnormalised accumulators a_s give out = sum_s e^(m_s - m) a_s / sum_s e^(m_s - m) l_s,
// m = max_s m_s. Splits past the row's last key hold m_s = NEGATIVE and l_s = 0 and drop out. One workgroup per
// (head, row); each invocation owns head dimensions lane, lane + WORKGROUP_SIZE, ...
override WORKGROUP_SIZE: u32 = 64;

struct Params {
  heads: u32,
  head_dim: u32,
  splits: u32,
}

@group(0) @binding(0) var<storage, read> partials: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(workgroup_id) group: vec3u, @builtin(local_invocation_index) lane: u32) {
  let head = group.x;
  let t = group.y;
  let head_dim = params.head_dim;
  let first = (t * params.heads + head) * params.splits;
  var top = partials[first * (head_dim + 2u) + head_dim];
  for (var s = 1u; s < params.splits; s++) {
    top = max(top, partials[(first + s) * (head_dim + 2u) + head_dim]);
  }
  var total = 0.0;
  for (var s = 0u; s < params.splits; s++) {
    let record = (first + s) * (head_dim + 2u);
    total += exp(partials[record + head_dim] - top) * partials[record + head_dim + 1u];
  }
  for (var d = lane; d < head_dim; d += WORKGROUP_SIZE) {
    var sum = 0.0;
    for (var s = 0u; s < params.splits; s++) {
      let record = (first + s) * (head_dim + 2u);
      sum += exp(partials[record + head_dim] - top) * partials[record + d];
    }
    out[(t * params.heads + head) * head_dim + d] = sum / total;
  }
}

enable subgroups;
// Checks the one property of subgroups that the *_subgroup.wgsl kernels rely on and WebGPU does not promise: in a
// one-dimensional workgroup, subgroups are runs of consecutive local_invocation_index, so that invocation `lane` is
// number lane % subgroup_size of its subgroup. Each invocation writes 1 where that holds for it, 0 elsewhere.
// (It holds on the Vulkan drivers seen so far; where it does not, the runner keeps the workgroup-memory kernels.)
@group(0) @binding(0) var<storage, read_write> ok: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) lane: u32, @builtin(subgroup_invocation_id) id: u32, @builtin(subgroup_size) size: u32) {
  let first = subgroupBroadcastFirst(lane);
  ok[lane] = select(0u, 1u, id == lane % size && first == lane - id && size <= 64u && (size & (size - 1u)) == 0u);
}

// The reference for quantize_q8_1 is the encoder in kernels/formats/q8_1.ts (llama.cpp's x86 activation
// quantization for Q4_1 / Q5_1 weights): one definition, no copy.
export { quantizeQ8_1 as quantizeQ8_1Ref } from "../formats/q8_1.js";

// The reference for quantize_q8_k is the Q8_K encoder in kernels/formats/q8_k.ts: activations must quantize byte for
// byte as llama.cpp's CPU path does before a K-quant dot product (one reference, no copy).
export { quantizeQ8_K as quantizeQ8_KRef } from "../formats/q8_k.js";

// The reference for quantize_q8_0 is the GGUF encoder itself: activations must quantize byte for byte as
// llama.cpp's CPU path does, and kernels/formats/q8_0.ts is where that definition lives (one reference, no copy).
export { quantizeQ8_0 as quantizeQ8_0Ref } from "../formats/q8_0.js";

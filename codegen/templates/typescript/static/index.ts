/**
 * LLM-Stream bindings for TypeScript: decode, validate, encode and aggregate streams.
 *
 * Everything in this package is generated from the spec source by `llm-stream generate`, beside
 * the Python bindings and from the same schemas, registries and lifecycle tables.
 */

export { Aggregate, aggregate, type ToolCall, type Usage } from "./aggregate.js";
export { Decoder, type DecoderOptions } from "./decoder.js";
export {
    type Diagnostic, formatDiagnostic, LLMStreamError, type SchemaError, type Severity,
} from "./diagnostics.js";
export { Encoder, encodeEvent } from "./encoder.js";
export { loads } from "./jsontext.js";
export * as lifecycle from "./lifecycle.js";
export * from "./registry.js";
export { type Rule, RULES, severity } from "./rules.js";
export { SSEDecoder, type SSEEvent, type SSELimits } from "./sse.js";
export * from "./types.js";
export * from "./validators.js";

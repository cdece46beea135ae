/**
 * What every layer reports: a problem named by the rule it breaks and the input line it is on.
 *
 * One shape for all layers (SSE, envelope, lifecycle) so that a caller can sort, print and
 * serialise diagnostics without knowing which layer found them.
 */

/** MUST-level rules give errors; SHOULD-level rules and unregistered event types warnings. */
export type Severity = "error" | "warning";

/** A rule broken at a line of the input (1-based; 0 when the input has no lines). */
export interface Diagnostic {
    readonly rule: string;
    readonly line: number;
    readonly message: string;
    readonly severity: Severity;
}

/** A validator's finding: the rule, the JSON pointer of the offending value, and why. */
export interface SchemaError {
    readonly rule: string;
    readonly pointer: string;
    readonly message: string;
}

/** `line: rule message`, as the Python bindings print a diagnostic. */
export function formatDiagnostic(diagnostic: Diagnostic): string {
    return `${diagnostic.line}: ${diagnostic.rule} ${diagnostic.message}`;
}

/**
 * Thrown in strict mode on the first error-severity diagnostic. `events` holds the events that
 * the same `feed()` or `close()` completed before the error, so that nothing decoded is lost.
 */
export class LLMStreamError extends Error {
    readonly diagnostic: Diagnostic;
    events: unknown[] = [];

    constructor(diagnostic: Diagnostic) {
        super(formatDiagnostic(diagnostic));
        this.name = "LLMStreamError";
        this.diagnostic = diagnostic;
    }
}

"""`llm-stream conformance URL`: a fixed set of scenario requests sent to a live endpoint, each
response judged by the bindings' decoder and by what the scenario expects of it."""

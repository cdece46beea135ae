"""`llm-stream serve`: a reference LLM-Stream endpoint and gateway built on the bindings.

An ASGI application (Starlette, served by uvicorn) that answers `application/llm-request+json`
requests with LLM-Stream and OpenAI chat requests with chunks the `openai` SDK reads, from a
built-in deterministic mock model or from a vendor upstream whose stream it translates as it
arrives. It needs the `serve` extra (`pip install 'llm-stream[serve]'`); the bindings do not.
"""

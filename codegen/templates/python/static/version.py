"""The version of this package (the bindings and the toolchain released together), which
pyproject.toml reads; the version of the standard it implements is `registry.SPEC_VERSION`."""

__version__ = "1.0.0a1"

"""C emission: lowering of ops to kernel calls, Jinja templates, C compiler driver."""

# The dialect first: its ops import this package's lowering helpers, which
# import the dialect's element types; entered here first, the other order
# would find lowering half-initialised.
import mlvm.dialect  # noqa: F401, E402

"""C emission: lowering of ops to kernel calls, Jinja templates, C compiler driver."""

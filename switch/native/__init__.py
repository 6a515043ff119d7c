"""The native data path: BMv2 JSON compiled to C at load time (see codegen.py)."""

"""protoc's output for P4Runtime 1.4.1: regenerate with scripts/p4runtime_protos.py, do not edit."""

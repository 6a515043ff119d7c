"""P4Runtime for the switch: the gRPC server and its entities over the engine facade."""

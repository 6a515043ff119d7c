"""ina.p4rt: P4Runtime plumbing shared by the switch's server and the controller.

- `proto`: the p4runtime 1.4.1 protobuf modules and google.rpc status, imported in one place.
- `codec`: integers as P4Runtime's canonical big-endian byte strings; MAC/IPv4 text.
- `schema`: a P4Info answering "what is table X / action Y / register Z" by name, alias or id.
- `tls`: gRPC TLS credentials from PEM files, for the server and the controller.
"""

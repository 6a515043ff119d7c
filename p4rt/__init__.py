"""ina.p4rt: P4Runtime plumbing shared by the switch's server and the controller.

- `proto`: the P4Runtime 1.4.1 protobuf modules (generated/, for protobuf's upb backend) and
  google.rpc's, imported in one place; the message size limit; WriteRequestHead.
- `codec`: integers as P4Runtime's canonical big-endian byte strings; MAC/IPv4 text.
- `schema`: a P4Info answering "what is table X / action Y / register Z" by name, alias or id.
- `entities`: table entries (match fields, actions), registers, counters, direct counters, meters,
  multicast groups and clone sessions as typed values, encoded and decoded against a schema in one
  place for the controller and the switch's server, refusals carrying the spec's code.
- `tls`: gRPC TLS credentials from PEM files, for the server and the controller.
"""

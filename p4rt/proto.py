"""The P4Runtime 1.4.1 protobuf modules and google.rpc's, imported in one place, and what both
sides of the wire agree on about messages.

p4rt/generated/ is protoc's output for the descriptors of the p4runtime 1.4.1 wheel
(scripts/p4runtime_protos.py), so protobuf runs its fast upb backend; the wheel's own modules are
too old for it. Nothing else in ina imports a _pb2 module but google.protobuf's and google.rpc's.
"""

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.rpc import code_pb2, status_pb2

from ina.p4rt.generated import p4data_pb2, p4info_pb2, p4runtime_pb2, p4runtime_pb2_grpc

__all__ = [
    "MAX_MESSAGE_BYTES",
    "WriteRequestHead",
    "code_pb2",
    "p4data_pb2",
    "p4info_pb2",
    "p4runtime_pb2",
    "p4runtime_pb2_grpc",
    "status_pb2",
]

# Received and sent, by the switch's server and the controller. The largest message the aggregation
# program needs is its pipeline at ELEMS=64 (p4c-bm2-ss's JSON: 0.75 MB); `ina bench p4runtime`
# measures it, the controller's largest Write and a full Read page (docs/security.md, Limits).
MAX_MESSAGE_BYTES = 4 << 20


def _write_request_head() -> type:
    """WriteRequest's message type less its `updates`: it parses a request's few small fields and
    skips the updates, kept as unparsed bytes, so a server can refuse a client that may not write
    before it spends time and memory on them (12.6 MB: 0.013 s instead of 0.30 s, `ina bench p4runtime`)."""
    file = descriptor_pb2.FileDescriptorProto(
        name="ina/p4rt/write_request_head.proto",
        package="ina.p4rt",
        syntax="proto3",
        dependency=[p4runtime_pb2.DESCRIPTOR.name],
    )
    head = file.message_type.add()
    p4runtime_pb2.WriteRequest.DESCRIPTOR.CopyToProto(head)
    head.name = "WriteRequestHead"
    kept = [f for f in head.field if f.name != "updates"]
    del head.field[:]
    head.field.extend(kept)
    del head.enum_type[:]  # its atomicity stays a WriteRequest.Atomicity
    added = descriptor_pool.Default().AddSerializedFile(file.SerializeToString())
    return message_factory.GetMessageClass(added.message_types_by_name[head.name])


WriteRequestHead = _write_request_head()

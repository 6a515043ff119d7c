"""The P4Runtime 1.4.1 protobuf modules and google.rpc's, imported in one place.

p4rt/generated/ is protoc's output for the descriptors of the p4runtime 1.4.1 wheel
(scripts/p4runtime_protos.py), so protobuf runs its fast upb backend; the wheel's own modules are
too old for it. Nothing else in ina imports a _pb2 module but google.protobuf's and google.rpc's.
"""

from google.rpc import code_pb2, status_pb2

from ina.p4rt.generated import p4data_pb2, p4info_pb2, p4runtime_pb2, p4runtime_pb2_grpc

__all__ = ["code_pb2", "p4data_pb2", "p4info_pb2", "p4runtime_pb2", "p4runtime_pb2_grpc", "status_pb2"]

"""The P4Runtime protobuf modules (from the pinned p4runtime 1.4.1 package), imported in one place."""

from google.rpc import code_pb2, status_pb2
from p4.config.v1 import p4info_pb2
from p4.v1 import p4data_pb2, p4runtime_pb2, p4runtime_pb2_grpc

__all__ = ["code_pb2", "p4data_pb2", "p4info_pb2", "p4runtime_pb2", "p4runtime_pb2_grpc", "status_pb2"]

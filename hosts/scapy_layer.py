"""A scapy layer for ina's aggregation header, for decoding captures and crafting test packets;
its fields are ina.p4src.protocol's `FIELDS`, so the layer follows the header.

>>> from ina.hosts.scapy_layer import InaAgg
>>> pkt = Ether()/IP(dst="10.0.0.254")/UDP(sport=0xBEE0, dport=0xBEE0)/InaAgg(rank=1, job_id=3, epoch=7)
"""

from scapy.fields import (
    BitField,
    ByteEnumField,
    ByteField,
    Field,
    FieldListField,
    IntField,
    ShortField,
    SignedIntField,
)
from scapy.layers.inet import UDP
from scapy.packet import Packet, bind_layers

from ina.p4src.protocol import FIELDS, MSG_RESULT, MSG_STATUS, MSG_UPDATE, UDP_PORT

_BY_WIDTH = {8: ByteField, 16: ShortField, 32: IntField}


def _field(name: str, width: int) -> Field:
    if name == "msg_type":
        return ByteEnumField(
            name, MSG_UPDATE, {MSG_UPDATE: "UPDATE", MSG_RESULT: "RESULT", MSG_STATUS: "STATUS"}
        )
    if width in _BY_WIDTH:
        return _BY_WIDTH[width](name, 0)
    return BitField(name, 0, width)


class InaAgg(Packet):
    name = "InaAgg"
    fields_desc = [  # noqa: RUF012 - scapy's declaration style
        *(_field(name, width) for name, width in FIELDS),
        FieldListField("values", [], SignedIntField("value", 0)),
    ]


bind_layers(UDP, InaAgg, dport=UDP_PORT)
bind_layers(UDP, InaAgg, sport=UDP_PORT)

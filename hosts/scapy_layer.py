"""A scapy layer for ina's aggregation header, for decoding captures and crafting test packets.

>>> from ina.hosts.scapy_layer import InaAgg
>>> pkt = Ether()/IP(dst="10.0.0.254")/UDP(sport=0xBEE0, dport=0xBEE0)/InaAgg(rank=1, job_id=3, epoch=7)
"""

from scapy.fields import (
    BitField,
    ByteEnumField,
    ByteField,
    FieldListField,
    IntField,
    ShortField,
    SignedIntField,
)
from scapy.layers.inet import UDP
from scapy.packet import Packet, bind_layers

from ina.p4src.protocol import MSG_RESULT, MSG_STATUS, MSG_UPDATE, UDP_PORT


class InaAgg(Packet):
    name = "InaAgg"
    fields_desc = [  # noqa: RUF012 - scapy's declaration style
        ByteEnumField(
            "msg_type",
            MSG_UPDATE,
            {MSG_UPDATE: "UPDATE", MSG_RESULT: "RESULT", MSG_STATUS: "STATUS"},
        ),
        ByteField("rank", 0),
        ShortField("job_id", 0),
        BitField("pool_set", 0, 1),
        BitField("pool_index", 0, 15),
        ByteField("exponent", 0),
        ByteField("flags", 0),
        ShortField("count", 0),
        IntField("epoch", 0),
        IntField("round", 0),
        IntField("bitmap", 0),
        FieldListField("values", [], SignedIntField("value", 0)),
    ]


bind_layers(UDP, InaAgg, dport=UDP_PORT)
bind_layers(UDP, InaAgg, sport=UDP_PORT)

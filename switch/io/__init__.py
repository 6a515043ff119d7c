"""Packet I/O: AF_PACKET ports and pcap files; knows nothing of programs."""

"""ina.topologies"""

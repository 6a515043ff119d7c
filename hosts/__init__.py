"""ina.hosts"""

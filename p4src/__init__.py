"""ina.p4src"""

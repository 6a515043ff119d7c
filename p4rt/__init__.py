"""ina.p4rt"""

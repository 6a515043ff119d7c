"""ina.compiler"""

"""ina.switch"""

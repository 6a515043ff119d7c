"""ina.bench"""

"""ina.controller"""

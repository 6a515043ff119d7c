"""The `ina` umbrella command: dispatch, usage and errors."""

from ina.cli import main


def test_unknown_command_is_a_usage_error(capsys):
    assert main(["frobnicate"]) == 2
    assert "unknown command 'frobnicate'" in capsys.readouterr().err


def test_no_arguments_prints_usage_and_exits_2(capsys):
    assert main([]) == 2
    assert "usage: ina COMMAND" in capsys.readouterr().out

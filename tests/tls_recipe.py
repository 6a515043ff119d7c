"""docs/security.md's TLS recipe, run as written: the tests make their certificates with it, so the
recipe users follow and the certificates the tests trust cannot drift apart."""

import subprocess
from pathlib import Path

SECURITY_MD = Path(__file__).resolve().parents[1] / "docs" / "security.md"
DOCS_SWITCH_IP = "10.0.0.254"  # the address the recipe issues the switch's certificate for


def recipe() -> list[str]:
    """The shell lines of the TLS setup's code block that make files: its openssl and echo lines."""
    text = SECURITY_MD.read_text()
    section = text[text.index("### TLS setup") :]
    section = section[: section.index("\n### ")]
    lines = [line.strip() for line in section.splitlines() if line.startswith("    ")]
    return [line for line in lines if line.startswith(("openssl ", "echo "))]


def make_pki(directory: Path, switch_ip: str = "127.0.0.1") -> Path:
    """Run the recipe in `directory` (ca, server and client .crt/.key), the switch's certificate
    issued for `switch_ip` instead of the docs' address; the directory."""
    lines = recipe()
    assert sum(f"IP:{DOCS_SWITCH_IP}" in line for line in lines) == 1, (
        "the recipe's switch address moved"
    )
    for line in lines:
        subprocess.run(
            line.replace(f"IP:{DOCS_SWITCH_IP}", f"IP:{switch_ip}"),
            shell=True,
            cwd=directory,
            check=True,
            capture_output=True,
        )
    return directory

"""The README's curl session works as written, against a fresh `mbserve serve`."""
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_readme_curl_session(embedded, tmp_path):
    text = (ROOT / "README.md").read_text()
    script = re.search(r"<!-- curl-session.*?-->\n```sh\n(.*?)```", text, re.S).group(1)
    script = script.replace("http://127.0.0.1:8000", embedded).replace("examples/", f"{ROOT}/examples/")
    out = subprocess.run(["bash", "-eu", "-c", script], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "#OutputVariableType = HomogeneousTransformation" in out.stdout
    assert re.search(r'"status": ?"succeeded"', out.stdout)
    assert "}\n#Exudyn sensor output file" in out.stdout  # the status JSON ends its line
    assert (tmp_path / "results.json").stat().st_size > 0

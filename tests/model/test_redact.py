"""The report's redactor (issue 32, item 1): every kind of credential a command line, a setting, a URL or a
file shows becomes ``[redacted]`` and is counted by kind; a normal command line, torch settings, paths,
numbers, identifiers and git hashes pass unchanged."""

from __future__ import annotations

import secrets
import string

from magi_tui.model.outputs.redact import MARK, Redactor, looks_random, secret_name

HOME = "/home/alice"
#: what an ordinary training command looks like: nothing in it may change (except the home folder)
NORMAL = ["python", "/home/alice/proj/train.py", "--lr", "0.001", "--epochs", "3", "--output", "/tmp/out",
          "--model", "gpt2", "TORCH_LOGS=+dynamo", "TORCHINDUCTOR_MAX_AUTOTUNE=1", "--max-tokens", "128",
          "--max-token", "64", "--num-key-value-heads", "8", "--tokenizer", "bert-base-uncased",
          "--key-file", "./k.pem", "--password-file", "/etc/pw", "--compile-mode", "max-autotune",
          "--seed", "1234567890", "--sort-key", "name", "--use-auth", "--token-budget", "100", "--pass",
          "post_grad", "--resume", "runs/magi_depyf/run_20261124_073705", "--hf-model",
          "meta-llama/Llama-3.1-8B-Instruct", "--run-name", "L_self_modules_layers_modules_0_weight",
          "--class", "Qwen3OmniMoeCode2WavLayerScale", "--mode", "fast", "-v", "--dtype=bfloat16",
          "--no-auth-token"]


def test_a_normal_command_line_passes_unchanged():
    r = Redactor(home=HOME)
    out = r.argv(NORMAL)
    assert out == ["python", "~/proj/train.py", *NORMAL[2:]]
    assert r.total == 0 and r.home_paths == 1
    assert r.summary().startswith("Nothing that looks like a credential was found")


def test_every_kind_of_credential_on_a_command_line():
    hf = "hf_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3h"
    aws = "AKIA" + "IOSFODNN7EXAMPLE"
    rnd = "x9Fk2LmQ8vR3tZ7wYp1NbC4dQe"
    hexkey = "d41d8cd98f00b204e9800998ecf8427e"
    argv = ["python", "t.py", "--api-key", "XYZsecret123", "--token=abc", "password=hunter2", "--password", "123456",
            "https://user:pw@host.example/x", "--hf-token", hf, "ghp_" + "a1B2c3D4e5" * 4, "sk-proj-" + "x1Y2z3" * 5,
            aws, rnd, "--apiKey", "q", hexkey, "https://host/?token=abcdef&x=1", "HF_TOKEN=hf_short",
            "--lr", "0.1"]
    r = Redactor(home=HOME)
    out = r.argv(argv)
    joined = " ".join(out)
    for secret in ("XYZsecret123", "=abc", "hunter2", "123456", "user:pw", hf, "ghp_", "sk-proj", aws, rnd,
                   " q ", hexkey, "abcdef", "hf_short"):
        assert secret not in joined, secret
    assert out[:4] == ["python", "t.py", "--api-key", MARK] and out[-2:] == ["--lr", "0.1"]
    assert "--token=[redacted]" in out and "password=[redacted]" in out and "https://[redacted]@host.example/x" in out
    assert "https://host/?token=[redacted]&x=1" in out and "HF_TOKEN=[redacted]" in out
    assert r.counts == {"secret option value": 5, "secret setting value": 3, "URL credential": 1, "known token": 3,
                        "random-looking value": 2}
    summary = r.summary()
    assert "5 secret option values" in summary and "1 URL credential," in summary and MARK in summary
    assert not any(s in summary for s in ("XYZ", "hunter2", "hf_"))


def test_settings_and_files():
    text = "\n".join([
        'api_key = "sk-abc"',
        "os.environ['HF_TOKEN'] = 'secretvalue'",
        "os.environ['TORCH_TRACE'] = '/tmp/w/trace'",
        '{"password": "pw1", "count": 3, "token": null}',
        "db_password: hunter2",
        "Authorization: Bearer abc.def.ghi",
        "def f(token: str, key: Tensor): return token",
        "torch git version: 70d99e998b4955e0049d13a98d77ae1b14db1f45",
        "torch._functorch.config.unlift_effect_tokens = True",
        "cuda: 12.4  path /home/alice/x and /home/alicex and /tmp/home/alice",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nabc\n-----END RSA PRIVATE KEY-----",
        "clone git@github.com:org/repo and ssh://git@host/x and https://ghp_" + "Ab1Cd2Ef3G" * 4 + "@github.com/o/r",
    ])
    r = Redactor(home=HOME)
    out = r.text(text)
    for secret in ("sk-abc", "secretvalue", "pw1", "hunter2", "abc.def.ghi", "MIIEowIBAAKCAQEA", "Ab1Cd2Ef3G"):
        assert secret not in out, secret
    for kept in ("'/tmp/w/trace'", '"count": 3', '"token": null', "def f(token: str, key: Tensor): return token",
                 "70d99e998b4955e0049d13a98d77ae1b14db1f45", "unlift_effect_tokens = True", "~/x and /home/alicex",
                 "/tmp/home/alice", "git@github.com:org/repo", "ssh://git@host/x", "Authorization: Bearer [redacted]"):
        assert kept in out, kept
    assert r.counts["private key block"] == 1 and r.counts["URL credential"] == 1
    # the same pass twice changes nothing more (the marker is no value)
    again = Redactor(home=HOME)
    assert again.text(out) == out and again.total == 0


def test_environment_by_name_and_json():
    env = {"TORCH_LOGS": "+dynamo", "TORCHINDUCTOR_CACHE_DIR": "/home/alice/.cache/ind", "CUDA_VISIBLE_DEVICES": "0,1",
           "TRITON_CACHE_DIR": "/tmp/t", "HF_TOKEN": "hf_" + "Z" * 34, "MY_DB_URL": "postgres://u:p@db/x",
           "TORCH_SOME_TOKEN": "abc", "TORCHINDUCTOR_X": "--token=zzz"}
    r = Redactor(home=HOME)
    shown, hidden = r.environment(env)
    assert dict(shown) == {"TORCH_LOGS": "+dynamo", "TORCHINDUCTOR_CACHE_DIR": "~/.cache/ind",
                           "CUDA_VISIBLE_DEVICES": "0,1", "TRITON_CACHE_DIR": "/tmp/t",
                           "TORCHINDUCTOR_X": "--token=[redacted]"}
    assert hidden == ["HF_TOKEN", "MY_DB_URL", "TORCH_SOME_TOKEN"] and r.env_withheld == 3
    assert "3 environment variable(s) listed by name only" in r.summary()

    obj = {"command": ["python", "t.py", "--token", "abc"], "env": {"A_SECRET": "x", "TORCH_LOGS": "+inductor"},
           "steps": [{"why": "exited: https://u:p@h/", "seconds": 1.5, "api_key": "k-123"}], "runs": 3}
    r = Redactor(home=HOME)
    assert r.json(obj) == {"command": ["python", "t.py", "--token", MARK],
                           "env": {"TORCH_LOGS": "+inductor", "A_SECRET": MARK},
                           "steps": [{"why": f"exited: https://{MARK}@h/", "seconds": 1.5, "api_key": MARK}], "runs": 3}


def test_names_and_random_values():
    assert secret_name("--api-key") == 2 and secret_name("--hfToken") == 2 and secret_name("DB_PASSWORD") == 3
    assert secret_name("--max-tokens") == secret_name("--key-file") == secret_name("--tokenizer") == 0
    assert secret_name("--sort-key") == 1 and secret_name("key") == 1
    alphabet = string.ascii_letters + string.digits
    keys = [secrets.token_urlsafe(30) for _ in range(200)] + \
           ["".join(secrets.choice(alphabet) for _ in range(32)) for _ in range(200)]
    assert sum(map(looks_random, keys)) >= 0.9 * len(keys)
    names = ["ThisIsACamelCaseIdentifier2Long", "L_self_modules_Linear_0_weight", "TwoLayerTransformer123Abc",
             "meta-llama/Llama-3.1-8B-Instruct", "Wav2Vec2ConformerForPreTraining", "run_20261124_073705_rank_0",
             "70d99e998b4955e0049d13a98d77ae1b14db1f45", "TORCHINDUCTOR_FX_GRAPH_CACHE_DEFAULT"]
    assert not any(map(looks_random, names))
    assert looks_random("70d99e998b4955e0049d13a98d77ae1b14db1f45", hex_too=True)

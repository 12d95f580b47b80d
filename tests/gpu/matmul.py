# The GPU check's tool: multiply two random matrices on CUDA with PyTorch.
import time

import torch


def service_handler(event, context):
    n = int(event.get("n", 1024))
    if not torch.cuda.is_available():
        return {"statusCode": 503, "body": {"error": "CUDA is not available"}}
    device = torch.device("cuda")
    a = torch.randn(n, n, device=device)
    b = torch.randn(n, n, device=device)
    torch.cuda.synchronize()
    start = time.perf_counter()
    c = a @ b
    torch.cuda.synchronize()
    elapsed_ms = (time.perf_counter() - start) * 1000
    return {
        "device": str(c.device),
        "gpu": torch.cuda.get_device_name(0),
        "n": n,
        "matmul_ms": round(elapsed_ms, 3),
        "checksum": float(c.sum().item()),
    }

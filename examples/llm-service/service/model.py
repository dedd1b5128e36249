"""Loads the model once and generates text."""

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig


def attention_implementation() -> str:
    major, minor = torch.cuda.get_device_capability()
    if major == 9:  # Hopper
        return "flash_attention_3"
    return "sdpa"


def load(model_id: str, quantize: bool = True):
    torch.backends.cudnn.benchmark = True
    quant = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16) if quantize else None
    tokenizer = AutoTokenizer.from_pretrained(model_id)
    model = AutoModelForCausalLM.from_pretrained(
        model_id,
        quantization_config=quant,
        attn_implementation=attention_implementation(),
        torch_dtype=torch.bfloat16,
        device_map="cuda",
    )
    return tokenizer, torch.compile(model, mode="reduce-overhead")


def kv_cache_dtype() -> torch.dtype:
    """FP8 KV cache halves the memory of long contexts."""
    return torch.float8_e4m3fn

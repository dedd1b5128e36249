"""HTTP front end."""

from fastapi import FastAPI

from service import gpu_info, model

app = FastAPI()
_tokenizer, _model = model.load("meta-llama/Llama-3.1-8B-Instruct")


@app.get("/health")
def health() -> dict:
    return {"gpus": gpu_info.gpu_memory_report(), "driver": gpu_info.driver_version()}

"""At what price: $/GPU-hour, $ per million tokens, $/GB, energy, buy-vs-rent.

The formulas are the ones the seeds work by hand (see docs/cost.md):

    $/Mtok       = $/GPU-hour / (tokens/s per GPU × 3600) × 10^6
    $/GB·hour    = $/GPU-hour / memory GB as printed on the datasheet (GiB-class)
    J/token      = watts / (tokens/s per GPU)
    break-even h = purchase $ / ($/GPU-hour rented − kW × $/kWh to run your own)

Catalog prices drift fast; every price says where and when it was quoted, and
``--price GPU=USD`` replaces it.
"""

from __future__ import annotations

from gpuport.cost.model import PriceUsed
from gpuport.knowledge.gpus import GpuSpec, Price

RENT_KINDS = ("on-demand", "reserved", "spot")
SECONDS_PER_HOUR = 3600.0


def catalog_price(gpu: GpuSpec, kind: str) -> tuple[PriceUsed | None, str | None]:
    """The newest catalog rental price of ``kind``, else of another kind (with a note).

    Among prices of the newest date, the first listed wins, so a catalog file decides
    ties by order.
    """
    for want in (kind, *(k for k in RENT_KINDS if k != kind)):
        price = _newest([p for p in gpu.prices if p.kind == want])
        if price is not None:
            note = None
            if want != kind:
                note = f"no {kind} price in the catalog for {gpu.key}: using its {want} price"
            return (
                PriceUsed(
                    usd_per_hour=price.usd,
                    kind=price.kind,
                    origin="catalog",
                    provider=price.provider,
                    date=price.date,
                    source=price.source,
                ),
                note,
            )
    return None, None


def catalog_purchase(gpu: GpuSpec) -> Price | None:
    return _newest([p for p in gpu.prices if p.kind == "purchase"])


def _newest(prices: list[Price]) -> Price | None:
    if not prices:
        return None
    latest = max(p.date for p in prices)
    return next(p for p in prices if p.date == latest)


def usd_per_mtok(usd_per_hour: float, tokens_per_s: float) -> float:
    """Dollars per million tokens for one GPU producing ``tokens_per_s``."""
    return usd_per_hour / (tokens_per_s * SECONDS_PER_HOUR) * 1e6


def usd_per_gb_hour(usd_per_hour: float, memory_gb: float) -> float:
    """$/hour over the datasheet's memory figure (the H100's "80 GB", really 80 GiB).

    The per-GB price people quote and compare (seed 004's $0.010 vs $0.022) divides by
    the number printed on the sheet, so this does too; per 10^9 bytes it is 7 % lower.
    """
    return usd_per_hour / memory_gb


def joules_per_token(watts: float, tokens_per_s: float) -> float:
    return watts / tokens_per_s


def energy_usd_per_mtok(watts: float, tokens_per_s: float, usd_per_kwh: float) -> float:
    """Electricity per million tokens: kW × $/kWh spread over an hour's tokens."""
    return usd_per_mtok(watts / 1000.0 * usd_per_kwh, tokens_per_s)


def breakeven_hours(
    purchase_usd: float, rent_per_hour: float, watts: float, usd_per_kwh: float
) -> float | None:
    """Hours of use after which owning costs less than renting; None if never.

    Owning costs the purchase once plus electricity per hour of use; renting costs the
    hourly rate. Cooling, hosting, staff and resale value are left out: they move the
    answer both ways and depend on who buys.
    """
    saving = rent_per_hour - watts / 1000.0 * usd_per_kwh
    if saving <= 0:
        return None
    return purchase_usd / saving


def breakeven_days(hours: float, utilization: float) -> float:
    """Calendar days to reach ``hours`` of use when the GPU is busy ``utilization`` of the time."""
    return hours / (24.0 * utilization)

"""At what price: $/GPU-hour, $ per million tokens, $/GB, energy, buy-vs-rent.

The formulas are the ones the seeds work by hand (see docs/cost.md):

    $/Mtok       = $/GPU-hour / (tokens/s per GPU × 3600) × 10^6
    $/GB·hour    = $/GPU-hour / memory GB as printed on the datasheet (GiB-class)
    J/token      = watts / (tokens/s per GPU)
    break-even h = purchase $ / ($/GPU-hour rented − kW × $/kWh to run your own)

Catalog prices drift fast; every price is the median of the quotes of one kind
(on-demand, spot, reserved) with each quote's provider, date and source, and
``--price GPU=USD`` replaces it.
"""

from __future__ import annotations

import statistics

from gpuport.cost.model import PriceUsed
from gpuport.knowledge.gpus import GpuSpec, Price

RENT_KINDS = ("on-demand", "reserved", "spot")
SECONDS_PER_HOUR = 3600.0


# Quotes older than this, counted back from a kind's newest quote, no longer set the price.
QUOTE_WINDOW_DAYS = 365


def catalog_price(gpu: GpuSpec, kind: str) -> tuple[PriceUsed | None, str | None]:
    """The catalog's ``kind`` price: the median of the providers' quotes, else (with a note)
    the same for another kind.

    Quotes are one per provider and date in gpus.toml. Those within a year of the kind's
    newest quote count; the price is their median (the mean of the middle two for an even
    count), dated by the newest, and every quote behind it is listed.
    """
    for want in (kind, *(k for k in RENT_KINDS if k != kind)):
        quotes = _window([p for p in gpu.prices if p.kind == want])
        if not quotes:
            continue
        note = None
        if want != kind:
            note = (
                f"no {kind} price in the catalog for {gpu.key}: its {want} price is shown, "
                f"labelled, and left out of any cheapest-GPU comparison"
            )
        values = sorted(q.usd for q in quotes)
        newest = max(quotes, key=lambda q: q.date)
        if len(quotes) == 1:
            provider, source = newest.provider, newest.source
        else:
            provider = f"median of {len(quotes)} providers' quotes"
            source = newest.source
        return (
            PriceUsed(
                usd_per_hour=statistics.median(values),
                kind=want,
                origin="catalog",
                provider=provider,
                date=newest.date,
                source=source,
                quotes=[f"{q.provider}: ${q.usd:.2f} ({q.date}, {q.source})" for q in quotes],
            ),
            note,
        )
    return None, None


def _window(prices: list[Price]) -> list[Price]:
    if not prices:
        return []
    newest = max(p.date for p in prices)
    return [p for p in prices if (newest - p.date).days <= QUOTE_WINDOW_DAYS]


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

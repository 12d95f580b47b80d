# Statistics summary: count, mean, median, standard deviation, quartiles and extremes of a
# list of numbers.
import math
import statistics


def service_handler(event, context):
    values = event.get("values") if isinstance(event, dict) else None
    if not isinstance(values, list) or not values:
        return {"statusCode": 400, "body": {"error": "event.values must be a non-empty list of numbers"}}
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values):
        return {"statusCode": 400, "body": {"error": "every value must be a finite number"}}
    summary = {
        "count": len(values),
        "mean": statistics.fmean(values),
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
    }
    if len(values) >= 2:
        summary["stdev"] = statistics.stdev(values)
        summary["quartiles"] = statistics.quantiles(values, n=4)
    return summary

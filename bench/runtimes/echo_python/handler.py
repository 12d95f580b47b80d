"""The echo of bench/runtimes.sh: returns the event it was given.

Toolgate runs it as a Python tool; bench/runtimes/uvicorn_echo.py imports this same file, so both
sides of the comparison run the same handler.
"""


def service_handler(event, context):
    return {"statusCode": 200, "body": event}

# A bundle's entry file: imports a package vendored at the bundle's root and a module beside it.
import helpers
from textkit import slug


def service_handler(event, context):
    return {"slug": slug.slugify(event["title"]), "shout": helpers.shout(event["title"]),
            "from": slug.__file__}

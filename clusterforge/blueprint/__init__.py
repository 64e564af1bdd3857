"""A blueprint made and read: written from a team template (`templating`, rendered in `template_sandbox`), loaded
with its lines, its compact rows and racks expanded (`expand`), shaped by the model its targets compose and checked
against the catalog (`load`)."""

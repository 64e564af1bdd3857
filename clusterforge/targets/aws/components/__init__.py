"""Pulumi components of the AWS stack, one concern per module (needs the `aws` extra)."""

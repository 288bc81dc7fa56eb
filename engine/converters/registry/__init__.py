"""Converters in Confluent's schema-registry wire format (Avro, Protobuf, JSON Schema) and their registry client.

The format libraries (fastavro, protobuf, jsonschema) come with the ``registry`` extra; this
package imports without them and a converter configured without them says which extra to install.
"""

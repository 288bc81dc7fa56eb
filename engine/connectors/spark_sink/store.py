"""The few file operations the commit log needs, done through Spark, never by the worker's own OS calls.

The output root may be any Hadoop URI the cluster can write (``hdfs://``, ``s3a://``, ``file:/``), and
the worker may have no access to it at all (a Spark Connect client). Two implementations:

* ``HadoopStore`` (classic session: local or ``spark://``): Hadoop's FileSystem through the driver's JVM
  gateway; a manifest is a file created under a temporary name and renamed into place (atomic on HDFS
  and local filesystems).
* ``DataFrameStore`` (Spark Connect: no JVM gateway): reads with ``spark.read``, writes with
  ``DataFrame.write`` and the server's commit protocol. A manifest is a one-row text dataset whose only
  part file the job commit renames into place, so readers see all of it or nothing. Removing means
  overwriting with an empty dataset (the directory stays, holding no data).

Both read each other's manifests, so a root written in one mode is read in the other.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from engine.api.errors import ConnectException


class OutputStore(Protocol):
    """File operations on one output root; paths are relative to it (``a/b``), results too."""

    root: str

    def absolute(self, relative: str) -> str:
        """The path Spark reads or writes for ``relative``."""
        ...

    def read_manifests(self, folder: str) -> list[str]:
        """The JSON text of every committed manifest under ``folder`` (recursively); [] if it is missing."""
        ...

    def write_manifest(self, folder: str, name: str, text: str) -> None:
        """Publish ``folder/name`` atomically: readers see all of ``text`` or nothing."""
        ...

    def list_data_dirs(self, pattern: str) -> list[str]:
        """Directories matching the glob ``pattern`` that hold at least one data file."""
        ...

    def remove(self, relative: str) -> None:
        """Remove ``relative`` and everything under it (no-op when missing); safe to repeat."""
        ...


def store_for(spark: Any, root: str) -> OutputStore:
    """The store a session can use: Hadoop's FileSystem when it has a JVM gateway, else DataFrames."""
    if is_connect(spark):
        return DataFrameStore(spark, root)
    return HadoopStore(spark, root)


def is_connect(spark: Any) -> bool:
    try:
        from pyspark.sql.connect.session import SparkSession as RemoteSession
    except ImportError:  # no Connect client installed: it cannot be one
        return False
    return isinstance(spark, RemoteSession)


def _relative(root: str, path: str) -> str:
    """``path`` below ``root``, both qualified alike or not (``file:/x`` against ``/x`` included)."""
    tail = _strip_scheme(path)
    base = _strip_scheme(root).rstrip("/") + "/"
    if not tail.startswith(base):
        raise ConnectException(f"{path} is not under the sink's path {root}")
    return tail[len(base) :]


def _strip_scheme(path: str) -> str:
    """``file:/a``, ``file:///a`` and ``hdfs://nn:8020/a`` -> ``/a``; a bare path stays as it is."""
    match = re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:(//[^/]*)?(?P<path>/.*)$", path)
    return match["path"] if match else path


class HadoopStore:
    """Hadoop's FileSystem API through py4j (classic sessions, where ``spark._jvm`` exists)."""

    def __init__(self, spark: Any, root: str) -> None:
        self._jvm = spark._jvm
        path = self._jvm.org.apache.hadoop.fs.Path(root)
        self._fs = path.getFileSystem(spark._jsc.hadoopConfiguration())
        # qualified against the driver's working directory and default filesystem: executors on a
        # cluster run elsewhere, so a relative path must not reach them as it was given
        self.root = str(self._fs.makeQualified(path).toString())

    def _path(self, relative: str) -> Any:
        return self._jvm.org.apache.hadoop.fs.Path(self.absolute(relative))

    def absolute(self, relative: str) -> str:
        return f"{self.root.rstrip('/')}/{relative}" if relative else self.root

    def read_manifests(self, folder: str) -> list[str]:
        texts: list[str] = []
        self._collect(self._path(folder), texts)
        return texts

    def _collect(self, path: Any, texts: list[str]) -> None:
        """Every visible file below ``path``, as Spark's recursive file lookup sees them."""
        if not self._fs.exists(path):
            return
        for status in self._fs.listStatus(path):
            child = status.getPath()
            if str(child.getName()).startswith(("_", ".")):
                continue  # _temporary, _SUCCESS, .crc files, a rename's temporary file
            if status.isDirectory():
                self._collect(child, texts)
            else:
                texts.append(self._read(child))

    def _read(self, path: Any) -> str:
        stream = self._fs.open(path)
        try:
            return str(self._jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8"))
        finally:
            stream.close()

    def write_manifest(self, folder: str, name: str, text: str) -> None:
        final = self._path(f"{folder}/{name}")
        temp = self._path(f"{folder}/.{name}.tmp")
        out = self._fs.create(temp, True)
        try:
            out.write(bytearray(text.encode("utf-8")))
            out.hsync()  # durable before it is published, where the filesystem can sync
        finally:
            out.close()
        if not self._fs.rename(temp, final):
            self._fs.delete(temp, False)
            raise ConnectException(
                f"could not publish the manifest {self.absolute(folder + '/' + name)} "
                "(rename refused: does it exist already?)"
            )

    def list_data_dirs(self, pattern: str) -> list[str]:
        found = self._fs.globStatus(self._path(pattern))
        if found is None:
            return []
        return [
            _relative(self.root, str(status.getPath().toString()))
            for status in found
            if status.isDirectory() and self._holds_data(status.getPath())
        ]

    def _holds_data(self, path: Any) -> bool:
        files = self._fs.listFiles(path, True)
        while files.hasNext():
            name = str(files.next().getPath().getName())
            if not name.startswith(("_", ".")):
                return True
        return False

    def remove(self, relative: str) -> None:
        self._fs.delete(self._path(relative), True)


class DataFrameStore:
    """Only what a Spark Connect client can do: ``spark.read`` and ``DataFrame.write``."""

    def __init__(self, spark: Any, root: str) -> None:
        self._spark = spark
        self.root = root.rstrip("/") or root

    def absolute(self, relative: str) -> str:
        return f"{self.root}/{relative}" if relative else self.root

    def read_manifests(self, folder: str) -> list[str]:
        try:
            rows = (
                self._spark.read.option("recursiveFileLookup", "true")
                .option("wholetext", "true")
                .text(self.absolute(folder))
                .collect()
            )
        except Exception as exc:
            if _missing_path(exc):
                return []
            raise
        return [str(row[0]) for row in rows if row[0]]

    def write_manifest(self, folder: str, name: str, text: str) -> None:
        # overwrite: only an attempt that never committed can be there (the task writes each name once
        # it is durable), and the job commit renames the one part file into place
        (
            self._spark.createDataFrame([(text,)], "value string")
            .coalesce(1)
            .write.mode("overwrite")
            .text(self.absolute(f"{folder}/{name}"))
        )

    def list_data_dirs(self, pattern: str) -> list[str]:
        try:
            # recursiveFileLookup: no partition discovery over directories the glob matched side by side
            rows = (
                self._spark.read.format("binaryFile")
                .option("recursiveFileLookup", "true")
                .load(self.absolute(pattern))
                .where("length > 0")
                .select("path")
                .collect()
            )
        except Exception as exc:
            if _missing_path(exc):
                return []
            raise
        depth = pattern.count("/") + 1
        found = {"/".join(_relative(self.root, str(row[0])).split("/")[:depth]) for row in rows}
        return sorted(found)

    def remove(self, relative: str) -> None:
        """Overwrite with an empty text dataset: its data goes, the directory stays (no delete over Connect)."""
        self._spark.createDataFrame([], "value string").write.mode("overwrite").text(self.absolute(relative))


def _missing_path(exc: Exception) -> bool:
    condition = getattr(exc, "getCondition", lambda: None)()
    return condition == "PATH_NOT_FOUND" or "PATH_NOT_FOUND" in str(exc).split("\n", 1)[0]

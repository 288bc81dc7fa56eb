package org.apache.kafka.common.utils;

/**
 * Kafka 4.4 moved AppInfoParser to org.apache.kafka.common.utils.internals; connect-file 4.1.2 (Maven
 * Central serves no 4.4.0 connect-file) still calls it here from FileStream*Connector.version(). Compiled
 * onto Java Connect 4.4's classpath by tests/differential/java_connect.py.
 */
public final class AppInfoParser {
    private AppInfoParser() {
    }

    public static String getVersion() {
        return org.apache.kafka.common.utils.internals.AppInfoParser.getVersion();
    }

    public static String getCommitId() {
        return org.apache.kafka.common.utils.internals.AppInfoParser.getCommitId();
    }
}

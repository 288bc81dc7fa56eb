import java.io.*;
import java.nio.charset.StandardCharsets;
import java.util.*;

/**
 * Differential oracle for engine.config.properties (tests/config/test_properties.py): reads inputs as
 * (int length, UTF-8 bytes) frames on stdin, loads each with java.util.Properties, and prints one line per
 * input: OK then tab-separated key/value pairs, or ERR and the IllegalArgumentException's message; every
 * string as UTF-16 code units in hex, so the comparison is exact.
 */
public class PropertiesDump {
    static final class Ordered extends Properties {
        final LinkedHashMap<String, String> order = new LinkedHashMap<>();
        @Override public synchronized Object put(Object k, Object v) {
            order.remove((String) k);
            order.put((String) k, (String) v);
            return super.put(k, v);
        }
    }

    public static void main(String[] args) throws Exception {
        DataInputStream in = new DataInputStream(new BufferedInputStream(System.in));
        StringBuilder out = new StringBuilder();
        while (true) {
            int n;
            try { n = in.readInt(); } catch (EOFException e) { break; }
            byte[] buf = new byte[n];
            in.readFully(buf);
            Ordered p = new Ordered();
            try {
                p.load(new StringReader(new String(buf, StandardCharsets.UTF_8)));
                out.append("OK");
                for (Map.Entry<String, String> e : p.order.entrySet()) {
                    out.append('\t').append(hex(e.getKey())).append('\t').append(hex(e.getValue()));
                }
            } catch (IllegalArgumentException e) {
                out.append("ERR\t").append(hex(e.getMessage()));
            }
            out.append('\n');
        }
        System.out.print(out);
    }

    static String hex(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) b.append(String.format("%04x", (int) c));
        return b.toString();
    }
}

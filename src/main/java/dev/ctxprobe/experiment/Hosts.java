package dev.ctxprobe.experiment;

import java.util.regex.Pattern;

/**
 * What a backend's {@code host} may be: a hostname, an IPv4 address or an IPv6 address (without brackets; ctxprobe
 * adds them in URLs). Anything else would reach the server's command line and its URL as it is.
 */
public final class Hosts {
    private static final Pattern LABEL = Pattern.compile("[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?");
    private static final Pattern IPV4 = Pattern.compile("(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})");
    private static final Pattern HEX_GROUP = Pattern.compile("[0-9A-Fa-f]{1,4}");

    private Hosts() {}

    /** Why {@code host} is not a hostname or IP literal, or null when it is one. */
    public static String problem(String host) {
        if (host.startsWith("[") && host.endsWith("]")) {
            return "write the IPv6 address without brackets, e.g. host: \"" + host.substring(1, host.length() - 1)
                    + "\"; ctxprobe adds them in URLs";
        }
        if (host.contains(":")) {
            return ipv6(host) ? null : "'" + host + "' is not an IPv6 address";
        }
        if (IPV4.matcher(host).matches()) {
            for (String part : host.split("\\.")) {
                if (Integer.parseInt(part) > 255) {
                    return "'" + host + "' is not an IPv4 address: each part is 0 to 255";
                }
            }
            return null;
        }
        if (host.isEmpty() || host.length() > 253) {
            return "a hostname has 1 to 253 characters";
        }
        for (String label : host.split("\\.", -1)) {
            if (!LABEL.matcher(label).matches()) {
                return "'" + host + "' is not a hostname or an IP address: use letters, digits, '-' and '.'"
                        + " (e.g. 127.0.0.1, ::1, gpu-node-3)";
            }
        }
        return null;
    }

    // Eight groups, or fewer with one "::"; the last 32 bits may be written as IPv4; a zone (%eth0) may follow.
    private static boolean ipv6(String host) {
        String address = host;
        int zone = host.indexOf('%');
        if (zone >= 0) {
            if (!host.substring(zone + 1).matches("[A-Za-z0-9_.-]+")) {
                return false;
            }
            address = host.substring(0, zone);
        }
        int lastColon = address.lastIndexOf(':');
        String tail = address.substring(lastColon + 1);
        if (tail.contains(".")) {
            if (!IPV4.matcher(tail).matches() || problem(tail) != null) {
                return false;
            }
            // The IPv4 part stands for the last two groups.
            address = address.substring(0, lastColon + 1) + "0:0";
        }
        return countGroups(address);
    }

    private static boolean countGroups(String address) {
        int gap = address.indexOf("::");
        if (gap != address.lastIndexOf("::")) {
            return false;
        }
        if (gap >= 0) {
            String left = address.substring(0, gap);
            String right = address.substring(gap + 2);
            int l = count(left);
            int r = count(right);
            return l >= 0 && r >= 0 && l + r < 8;
        }
        return count(address) == 8;
    }

    // The number of hex groups in a ':'-joined run, -1 when one is not a group; an empty run has none.
    private static int count(String run) {
        if (run.isEmpty()) {
            return 0;
        }
        String[] parts = run.split(":", -1);
        for (String p : parts) {
            if (!HEX_GROUP.matcher(p).matches()) {
                return -1;
            }
        }
        return parts.length;
    }
}

package dev.ctxprobe.launch;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;

/** One GET of a server's readiness path, as every launcher polls it. */
public final class HealthProbe {
    private HealthProbe() {}

    /** The HTTP status of a GET, or -1 when nothing answers (refused, reset, no answer within 2 s). */
    public static int status(URI uri) {
        HttpURLConnection c = null;
        try {
            c = (HttpURLConnection) uri.toURL().openConnection();
            c.setConnectTimeout(500);
            c.setReadTimeout(2000);
            c.setUseCaches(false);
            int code = c.getResponseCode();
            // A few KB at most: a health answer that never ends must not stall readiness past startup_s.
            InputStream body = code < 400 ? c.getInputStream() : c.getErrorStream();
            if (body != null) {
                body.readNBytes(4096);
                body.close();
            }
            return code;
        } catch (IOException notYet) {
            return -1;
        } finally {
            if (c != null) {
                c.disconnect();
            }
        }
    }
}

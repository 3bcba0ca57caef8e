import org.apache.paimon.utils.RoaringBitmap64;

import org.apache.paimon.shade.org.roaringbitmap.longlong.LongIterator;
import org.apache.paimon.shade.org.roaringbitmap.longlong.Roaring64Bitmap;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;

/**
 * Test-only bridge to the 64-bit roaring bitmap that Java Paimon 0.9 bundles (shaded), so the
 * Python serializer can be compared byte for byte with what Java writes for rbm64 columns.
 * Longs travel as comma-separated signed decimal text (py4j has no cheap long[] transfer).
 */
public final class Roaring64Helper {

    private Roaring64Helper() {}

    private static long[] parse(String csv) {
        if (csv == null || csv.isEmpty()) {
            return new long[0];
        }
        String[] parts = csv.split(",");
        long[] out = new long[parts.length];
        for (int i = 0; i < parts.length; i++) {
            out[i] = Long.parseLong(parts[i].trim());
        }
        return out;
    }

    /** Paimon's own path: RoaringBitmap64.bitmapOf(values in the given order).serialize(). */
    public static byte[] serialize(String csv) throws IOException {
        return RoaringBitmap64.bitmapOf(parse(csv)).serialize();
    }

    /** Exactly FieldRoaringBitmap64Agg.agg(acc, input) for two non-null values. */
    public static byte[] merge(byte[] acc, byte[] input) throws IOException {
        RoaringBitmap64 a = new RoaringBitmap64();
        RoaringBitmap64 b = new RoaringBitmap64();
        a.deserialize(acc);
        b.deserialize(input);
        a.or(b);
        return a.serialize();
    }

    /** The values of serialized bytes, ascending unsigned, as signed decimal text. */
    public static String values(byte[] data) throws IOException {
        Roaring64Bitmap bm = new Roaring64Bitmap();
        bm.deserialize(new DataInputStream(new ByteArrayInputStream(data)));
        StringBuilder sb = new StringBuilder();
        LongIterator it = bm.getLongIterator();
        while (it.hasNext()) {
            if (sb.length() > 0) {
                sb.append(',');
            }
            sb.append(it.next());
        }
        return sb.toString();
    }
}

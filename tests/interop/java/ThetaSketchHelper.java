import org.apache.paimon.utils.ThetaSketch;

import org.apache.paimon.shade.org.apache.datasketches.memory.Memory;
import org.apache.paimon.shade.org.apache.datasketches.theta.Sketch;
import org.apache.paimon.shade.org.apache.datasketches.theta.Sketches;
import org.apache.paimon.shade.org.apache.datasketches.theta.UpdateSketch;

/**
 * Test-only bridge to the theta sketches Java Paimon 0.9 bundles (shaded datasketches-java),
 * so the Python theta_sketch aggregator can be compared byte for byte with Java's union.
 * Longs travel as a start/count range or comma-separated decimal text (py4j has no cheap long[]).
 */
public final class ThetaSketchHelper {

    private ThetaSketchHelper() {}

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

    /** Compact ordered sketch (default k=4096, seed) of the listed longs, like ThetaSketch.sketchOf. */
    public static byte[] sketchOfLongs(String csv, int lgK) {
        UpdateSketch s = UpdateSketch.builder().setNominalEntries(1 << lgK).build();
        for (long v : parse(csv)) {
            s.update(v);
        }
        return s.compact().toByteArray();
    }

    /** Compact ordered sketch of the longs start, start+1, ..., start+count-1. */
    public static byte[] sketchOfRange(long start, long count, int lgK) {
        UpdateSketch s = UpdateSketch.builder().setNominalEntries(1 << lgK).build();
        for (long i = 0; i < count; i++) {
            s.update(start + i);
        }
        return s.compact().toByteArray();
    }

    /** Compact sketch of string items, optionally unordered, to feed odd-but-valid inputs. */
    public static byte[] sketchOfStrings(String csv, boolean ordered) {
        UpdateSketch s = UpdateSketch.builder().build();
        if (csv != null && !csv.isEmpty()) {
            for (String v : csv.split(",")) {
                s.update(v);
            }
        }
        return s.compact(ordered, null).toByteArray();
    }

    /** Paimon's own ThetaSketch.sketchOf(int...) for the ints start..start+count-1. */
    public static byte[] paimonSketchOfInts(int start, int count) {
        int[] vals = new int[count];
        for (int i = 0; i < count; i++) {
            vals[i] = start + i;
        }
        return ThetaSketch.sketchOf(vals);
    }

    /** Exactly FieldThetaSketchAgg.agg(acc, input) for two non-null values. */
    public static byte[] union(byte[] acc, byte[] input) {
        return ThetaSketch.union(acc, input);
    }

    /** Cardinality estimate of serialized bytes, to check sketches carry the intended content. */
    public static double estimate(byte[] data) {
        return Sketches.wrapSketch(Memory.wrap(data)).getEstimate();
    }

    /** Number of retained hashes of serialized bytes. */
    public static int retained(byte[] data) {
        Sketch s = Sketches.wrapSketch(Memory.wrap(data));
        return s.getRetainedEntries(true);
    }
}

import org.apache.paimon.casting.CastExecutor;
import org.apache.paimon.casting.CastExecutors;
import org.apache.paimon.data.Decimal;
import org.apache.paimon.types.DataTypes;

/**
 * Test-only bridge to Paimon 0.9's own DOUBLE -> DECIMAL(p, s) cast (the CastExecutor its
 * schema evolution and SQL casts resolve), so the writer's conversion of float input can be
 * compared value for value. Doubles travel as comma-separated raw IEEE bits (exact); results
 * come back one a line: this JVM's Double.toString, a space, then the plain decimal text or
 * "null" when Paimon's cast overflows.
 */
public final class DecimalCastHelper {

    private DecimalCastHelper() {}

    @SuppressWarnings("unchecked")
    public static String castDoubles(String bitsCsv, int precision, int scale) {
        CastExecutor<Double, Decimal> cast =
                (CastExecutor<Double, Decimal>)
                        CastExecutors.resolve(DataTypes.DOUBLE(), DataTypes.DECIMAL(precision, scale));
        StringBuilder sb = new StringBuilder();
        for (String bits : bitsCsv.split(",")) {
            double v = Double.longBitsToDouble(Long.parseLong(bits.trim()));
            Decimal d = cast.cast(v);
            sb.append(Double.toString(v)).append(' ').append(d == null ? "null" : d.toBigDecimal().toPlainString()).append('\n');
        }
        return sb.toString();
    }
}

import org.apache.paimon.fs.Path;
import org.apache.paimon.fs.local.LocalFileIO;
import org.apache.paimon.operation.OrphanFilesClean;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.FileStoreTableFactory;

import java.util.ArrayList;
import java.util.List;

/**
 * Test-only bridge to Java Paimon 0.9's OrphanFilesClean, so remove-orphan-files can be
 * compared with what Java deletes on an identical copy of a table.
 */
public final class OrphansHelper {

    private OrphansHelper() {}

    /**
     * Run OrphanFilesClean on the table at tablePath (main branch) with the cutoff
     * olderThan ("yyyy-MM-dd HH:mm:ss[.SSS]", JVM local time); dryRun replaces the deleting
     * file cleaner by a no-op. Returns the paths Java reports, one per line.
     */
    public static String removeOrphanFiles(String tablePath, String olderThan, boolean dryRun)
            throws Exception {
        FileStoreTable t = FileStoreTableFactory.create(LocalFileIO.create(), new Path(tablePath));
        OrphanFilesClean clean = new OrphanFilesClean(t).olderThan(olderThan);
        if (dryRun) {
            clean.fileCleaner(p -> {});
        }
        List<String> out = new ArrayList<>();
        for (Path p : clean.clean()) {
            out.add(p.toUri().getPath());
        }
        return String.join("\n", out);
    }
}

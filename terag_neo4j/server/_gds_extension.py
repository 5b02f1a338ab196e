"""Java source of the OpenGDS wiring class, compiled at provisioning time.

The GDS modules on Maven Central carry every procedure but not the `ExtensionFactory` that wires
them into Neo4j (upstream keeps it in the unpublished packaging module of the plugin jar). Without
it every GDS procedure fails to load ("... GraphDataScienceProcedures which is not a known
injectable component"). This class does the same wiring against the GDS 2.26 API, plus the
SysInfoProcFacade component that `gds.version()` and `gds.license.state()` inject.
"""

from __future__ import annotations

EXTENSION_CLASS = "org.terag.gds.TeragOpenGdsExtension"
EXTENSION_PATH = "org/terag/gds/TeragOpenGdsExtension.java"

EXTENSION_SOURCE = """\
package org.terag.gds;

import java.util.Optional;
import org.neo4j.configuration.Config;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.gds.LicensingBusinessFacade;
import org.neo4j.gds.OpenGdsLicenseState;
import org.neo4j.gds.OpenGdsLicensingServiceBuilder;
import org.neo4j.gds.SysInfoProcFacade;
import org.neo4j.gds.applications.operations.FeatureTogglesRepository;
import org.neo4j.gds.concurrency.OpenGdsConcurrencyValidator;
import org.neo4j.gds.concurrency.OpenGdsPoolSizes;
import org.neo4j.gds.configuration.DefaultsConfiguration;
import org.neo4j.gds.configuration.LimitsConfiguration;
import org.neo4j.gds.core.OpenGdsIdMapBehavior;
import org.neo4j.gds.core.model.OpenModelCatalog;
import org.neo4j.gds.core.write.NativeExportBuildersProvider;
import org.neo4j.gds.metrics.Metrics;
import org.neo4j.gds.procedures.integration.DefaultExportLocation;
import org.neo4j.gds.procedures.integration.LogAccessor;
import org.neo4j.gds.procedures.integration.OpenGraphDataScienceExtensionBuilder;
import org.neo4j.gds.projection.AlphaCypherAggregation;
import org.neo4j.gds.projection.CypherAggregation;
import org.neo4j.kernel.api.procedure.GlobalProcedures;
import org.neo4j.kernel.extension.ExtensionFactory;
import org.neo4j.kernel.extension.context.ExtensionContext;
import org.neo4j.kernel.lifecycle.Lifecycle;
import org.neo4j.logging.internal.LogService;

public class TeragOpenGdsExtension extends ExtensionFactory<TeragOpenGdsExtension.Dependencies> {
    public TeragOpenGdsExtension() {
        super("gds.open");
    }

    @Override
    public Lifecycle newInstance(ExtensionContext context, Dependencies deps) {
        var log = new LogAccessor().getLog(deps.logService(), getClass());
        var config = deps.config();
        var licensing = new OpenGdsLicensingServiceBuilder().build(config);
        deps.globalProcedures().registerComponent(
            SysInfoProcFacade.class,
            ctx -> new SysInfoProcFacade(new LicensingBusinessFacade(licensing)),
            true
        );
        return OpenGraphDataScienceExtensionBuilder.create(
            log,
            deps.databaseManagementService(),
            context.dependencySatisfier(),
            deps.globalProcedures(),
            config,
            new OpenGdsConcurrencyValidator(),
            DefaultsConfiguration.Instance,
            (db, cfg) -> new NativeExportBuildersProvider(),
            new DefaultExportLocation(log, config),
            new FeatureTogglesRepository(),
            new OpenGdsIdMapBehavior(),
            OpenGdsLicenseState.INSTANCE,
            LimitsConfiguration.Instance,
            Metrics.DISABLED,
            new OpenModelCatalog(),
            model -> { },
            new OpenGdsPoolSizes(),
            new CypherAggregation(),
            new AlphaCypherAggregation(),
            Optional.empty(),
            Optional.empty(),
            Optional.empty()
        ).getLeft().build();
    }

    public interface Dependencies {
        Config config();

        DatabaseManagementService databaseManagementService();

        GlobalProcedures globalProcedures();

        LogService logService();
    }
}
"""
